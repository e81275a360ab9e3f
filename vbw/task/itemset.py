"""A task's items: its dataset's rows, read once, their ids, and the Item built from a row
(fields, gold, the item's schemas), the base of vbw.task.runner.Task."""

from __future__ import annotations

import reprlib
from functools import cached_property
from pathlib import Path
from typing import Any

from vbw.errors import DataError
from vbw.task.base import StrictModel, field_names, search
from vbw.task.dataset import join_rows, read_rows
from vbw.task.extract import chain_value
from vbw.task.spec import IdFromPath, TaskSpec


# items Task.item keeps once built: report.html details the first 2,000 (the task layer
# cannot import vbw.report.browser.MAX_DETAILED_ITEMS)
KEEP_BUILT = 2_000


class Item(StrictModel):
    """One evaluation item: its id, declared fields, gold answer and schemas by name."""

    id: str
    fields: dict[str, Any]
    gold: Any
    schemas: dict[str, dict[str, Any]]
    field_gold: dict[str, Any] = {}  # each of the task's `fields`, its gold


class ItemSet:
    """The items of the task file at `path` with spec `spec` (its relative paths point
    next to it)."""

    def __init__(self, spec: TaskSpec, path: Path) -> None:
        self.spec = spec
        self.path = path
        self.root = path.parent
        self._built: dict[int, Item] = {}  # see item()
        self._ids: dict[tuple[int | None, bool], list[str]] = {}  # see ids()

    def data_files(self) -> list[Path]:
        d = self.spec.dataset
        files = [self.root / d.path]
        if d.join is not None:
            files.append(self.root / d.join.path)
        return files

    @cached_property
    def _all_rows(self) -> list[dict[str, Any]]:
        d = self.spec.dataset
        rows = read_rows(self.root / d.path)
        if d.join is not None:
            rows = join_rows(rows, read_rows(self.root / d.join.path), d.join.key,
                             self.root / d.join.path)
        if d.exclude:
            ids = [self._id(i, r) for i, r in enumerate(rows)]
            unknown = sorted(set(d.exclude) - set(ids))
            if unknown:
                raise DataError(f"{self._data_label}: dataset.exclude: no row has id "
                                f"{unknown[0]!r}")
            rows = [r for r, i in zip(rows, ids) if i not in set(d.exclude)]
        return rows

    def rows(self, n: int | None = None, all_rows: bool = False) -> list[dict[str, Any]]:
        """The task's rows: the first `dataset.first` (all with `all_rows`), then the first
        `n` of those. Read once per task."""
        rows = self._all_rows
        first = self.spec.dataset.first
        if first is not None and not all_rows:
            rows = rows[:first]
        return rows[:n] if n is not None else rows

    def ids(self, n: int | None = None, all_rows: bool = False) -> list[str]:
        """Item ids in dataset order, without building the items (worked out once)."""
        if (n, all_rows) not in self._ids:
            rows, d = self.rows(n, all_rows), self.spec.dataset
            self._ids[n, all_rows] = (  # (a row-index id needs no row: one f-string each)
                [self._id(i, row) for i, row in enumerate(rows)] if isinstance(d.id, IdFromPath)
                else [f"{d.id.prefix}{i}" for i in range(len(rows))])
        return list(self._ids[n, all_rows])

    def items(self, n: int | None = None, only: set[str] | None = None) -> list[Item]:
        """The first `n` items (all when None), in dataset order; with `only`, just those
        ids among them (scoring a replay needs no other rows built)."""
        rows = self.rows(n)
        out = []
        for i, row in enumerate(rows):
            item_id = self._id(i, row)
            if only is None or item_id in only:
                out.append(self._item(i, row, item_id))
        return out

    def item(self, index: int, item_id: str) -> Item:
        """The item of row `index` (its id already known from `ids()`): scoring a streamed
        replay builds each item only when its record arrives. The first KEEP_BUILT items
        built are kept (items are never changed once built): report.html's second pass
        details the first items again (vbw.report.listing), and finds them built."""
        built = self._built.get(index)
        if built is not None and built.id == item_id:
            return built
        item = self._item(index, self._all_rows[index], item_id)
        if len(self._built) < KEEP_BUILT:
            self._built[index] = item
        return item

    @cached_property
    def _gold_problem(self) -> Any:
        """The checker's gold test, if any (once: a model's missing attribute raises): why
        it cannot score an item's gold, as one line naming the task field to change."""
        return getattr(self.spec.check, "gold_problem", None)

    @cached_property
    def _data_label(self) -> str:
        return str(self.root / self.spec.dataset.path)

    def _id(self, index: int, row: dict[str, Any]) -> str:
        d = self.spec.dataset
        if isinstance(d.id, IdFromPath):
            raw_id = search(d.id.path, row)
            if raw_id is None:
                raise self._nothing("dataset.id.path", d.id.path, index, None, row)
            return str(raw_id)
        return f"{d.id.prefix}{index}"

    def _item(self, index: int, row: dict[str, Any], item_id: str) -> Item:
        d = self.spec.dataset
        fields = {}
        for name, path in d.fields.items():
            value = search(path, row)
            if value is None:
                raise self._nothing(f"dataset.fields.{name}", path, index, item_id, row)
            fields[name] = value
        gold = self._gold(d.gold, "dataset.gold", index, item_id, row, fields)
        field_gold = {name: self._gold(f.gold, f"fields.{name}.gold", index, item_id, row,
                                       fields) for name, f in self.spec.fields.items()}
        gold_problem = self._gold_problem
        problem = gold_problem(gold) if gold_problem is not None else None
        if problem is not None:
            raise DataError(f"{self.path}: task {self.spec.name}, item {item_id}: {problem}")
        schemas = {}
        for name, source in self.spec.schemas.items():
            try:
                schemas[name] = source.for_item(fields)
            except ValueError as e:
                raise DataError(f"{self.path}: schemas.{name}: item {item_id}: {e}") from None
        # Built from values this method produced: validating would only copy every
        # schema, so each item would hold its own copy of a static schema.
        return Item.model_construct(id=item_id, fields=fields, gold=gold, schemas=schemas,
                                    field_gold=field_gold)

    def _gold(self, spec: Any, where: str, index: int, item_id: str, row: dict[str, Any],
              fields: dict[str, Any]) -> Any:
        """A gold (GoldSpec `spec`, at task field `where`) read from the row."""
        gold = search(spec.path, row)
        if gold is None:
            raise self._nothing(f"{where}.path", spec.path, index, item_id, row)
        raw = gold
        if spec.extract:
            gold = chain_value(spec.extract, str(gold), fields, spec.coerce)
        else:
            gold = spec.coerce.apply(gold)
        if gold is None:
            steps = "extract and coerce steps give" if spec.extract else "coerce step gives"
            raise DataError(f"{self.path}: {where}: its {steps} no gold from "
                            f"{reprlib.repr(raw)} (at {spec.path!r}) in row {index} "
                            f"({item_id}) of {self._data_label}")
        return gold

    def _nothing(self, field: str, path: str, index: int, item_id: str | None,
                 row: dict[str, Any]) -> DataError:
        """A task path that finds nothing in a row: the task file and field, the row, and
        the names the row has (a typo is one of them, misspelt)."""
        which = f"row {index}" + (f" ({item_id})" if item_id is not None else "")
        return DataError(f"{self.path}: {field}: {path!r} finds nothing in {which} of "
                         f"{self._data_label}; the row's fields are: {field_names(row)}")
