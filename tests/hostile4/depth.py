"""Untrusted JSON past vbw's bounds (vbw.task.jsontext.values.loads): nesting depth and huge
integers from a server, a replay or a dataset; lone surrogates from a server or in a
replay's header; a replay line's and a tool reply's memory; BFCL's parallel matching."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.generate.standin import Canned, EchoServer
from tests.hostile4 import Case
from vbw.replay.stream import MAX_INTERVENTIONS
from vbw.task.bfcl_rules import MAX_CALLS

DEEP = "[" * 3000 + "]" * 3000
DEEP_OBJECTS = '{"a":' * 100_000 + "1" + "}" * 100_000  # past orjson's 1,024 levels
BIG_INT = "9" * 5001
GSM8K = ROOT / "replays/gsm8k/smollm2_135m/llamacpp.jsonl"
PARALLEL = ROOT / "conf/task/bfcl_parallel.yaml"


class _Server(EchoServer):
    """EchoServer (its canary and answers), but every POST after the first `good` gets
    `post`, and GETs come from `gets`."""

    def __init__(self, post: Canned | None = None, gets: dict[str, Canned] | None = None,
                 good: int = 1) -> None:
        super().__init__()
        self.post, self.gets, self.good = post, gets or {}, good

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Canned:
        if method == "POST" and self.post is not None:
            with self._lock:
                self.good -= 1
                hostile = self.good < 0
            if hostile:
                return self.post
        return super()._answer(method, path, headers, body)


def _live(srv: _Server, folder: Path, n: int = 1) -> list[str]:
    return ["task=gsm8k", "mode=live", f"n={n}", "backend=openai",
            f"backend.base_url={srv.base_url}", "backend.model=m",
            "backend.dialect=llama_cpp_python", "backend.max_retries=0",
            "arms.max_tokens.free=40", "arms.max_tokens.json=40",
            "arms.max_tokens.package=40", f"hydra.run.dir={folder}/o"]


LIVE = 2  # stderr lines of a live run that stops: its start line, then the error


def _served(post: Canned | None = None, gets: dict[str, Canned] | None = None,
            good: int = 1):
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        return _live(stack.enter_context(_Server(post, gets, good)), folder)
    return make


def _reply(extra: str) -> Canned:
    return Canned(body=('{"choices":[{"index":0,"message":{"role":"assistant","content":"1"},'
                        '"finish_reason":"stop","x":' + extra + "}]}").encode())


def _sse(extra: str) -> Canned:
    chunk = ('{"choices":[{"index":0,"delta":{"content":"1"},"finish_reason":null,"x":'
             + extra + "}]}")
    return Canned(body=f"data: {chunk}\n\n".encode(),
                  headers={"Content-Type": "text/event-stream"})


def _rescored(post: Canned | None = None, gets: dict[str, Canned] | None = None):
    """A live run against the server (it must succeed), then the case: re-scoring its
    replay."""
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        with _Server(post, gets, good=2) as srv:
            proc = subprocess.run([sys.executable, "-m", "vbw", *_live(srv, folder)],
                                  cwd=folder, capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return ["task=gsm8k", "n=1", f"replay={folder}/o/replay.jsonl",
                f"hydra.run.dir={folder}/re"]
    return make


def _replay_lines(n: int = 2) -> tuple[dict[str, Any], list[str]]:
    lines = GSM8K.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), lines[1:n + 1]


def _replay(edit_line: str | None = None, meta: dict[str, Any] | None = None):
    """The committed SmolLM2 GSM8K replay's header and first two items, with a third line
    `edit_line` (its text after the first item's id) or a changed header."""
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        head, items = _replay_lines()
        if meta is not None:
            head["meta"].update(meta)
        extra = [] if edit_line is None else ['{"id": "gsm8k_test_2", ' + edit_line]
        path = folder / "r.jsonl"
        path.write_text("\n".join([json.dumps(head), *items, *extra]) + "\n", "utf-8")
        return ["task=gsm8k", f"n={len(items) + len(extra)}", f"replay={path}",
                f"hydra.run.dir={folder}/o"]
    return make


def _interventions(count: int) -> str:
    event = '{"pos":1,"char":1,"wanted":"a","forced":"b","lp_wanted":-0.1,"lp_forced":-2.0}'
    others = "".join(f'"{arm}": {{"text": "1"}}, ' for arm in (
        "unconstrained", "prompt_json[answer]", "prompt_json[reasoning]",
        "constrained[reasoning]", "reason_then_constrain[answer]"))
    return ('"arms": {' + others + '"constrained[answer]": {"text": "{\\"answer\\": 1}", '
            '"interventions": [' + ",".join([event] * count) + "]}}}")


def _dataset(row: str):
    """A user task whose second data row is `row`."""
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        (folder / "d.jsonl").write_text('{"q": "1+1?", "a": 2}\n' + row + "\n")
        (folder / "t.yaml").write_text(
            "name: t\nlabel: acc\ndataset:\n  path: d.jsonl\n  id: {kind: row_index}\n"
            "  fields: {question: q}\n  gold: {path: a}\nprompts:\n  free: '{{question}}'\n"
            "  json: '{{question}} {{schema}}'\n  package: '{{schema}}'\n"
            "schemas:\n  answer: {type: object, properties: {answer: {type: number}}, "
            "required: [answer]}\nanswer_schema: answer\n"
            "extract:\n  free: [{kind: last_number}]\n  json: {path: answer}\n"
            "check: {kind: numeric}\n", "utf-8")
        return [f"task.files=[{folder / 't.yaml'}]", "mode=check"]
    return make


def _parallel(calls: int):
    """A bfcl_parallel-shaped task of one item whose gold expects `calls` calls, and a
    replay whose constrained arm makes them in the reverse order (the greedy pairing's
    worst case)."""
    def make(folder: Path, stack: contextlib.ExitStack) -> list[str]:
        fn = {"name": "f", "description": "d", "parameters": {
            "type": "dict", "properties": {"x": {"type": "integer", "description": "x"}},
            "required": ["x"]}}
        row = {"id": "p_0", "question": [[{"role": "user", "content": "call f"}]],
               "function": [fn]}
        gold = {"id": "p_0", "ground_truth": [{"f": {"x": [i]}} for i in range(calls)]}
        (folder / "q.jsonl").write_text(json.dumps(row) + "\n")
        (folder / "a.jsonl").write_text(json.dumps(gold) + "\n")
        task = PARALLEL.read_text(encoding="utf-8").replace(
            "name: bfcl_parallel", "name: par").replace(
            "../../tasks/data/bfcl_v4/BFCL_v4_parallel_possible_answer.jsonl", "a.jsonl").replace(
            "../../tasks/data/bfcl_v4/BFCL_v4_parallel.jsonl", "q.jsonl")
        (folder / "par.yaml").write_text(task, "utf-8")
        text = json.dumps({"calls": [{"f": {"x": i}} for i in reversed(range(calls))]})
        arms = ["unconstrained", "prompt_json[calls]", "constrained[calls]",
                "reason_then_constrain[calls]"]
        head = {"meta": {"format": "vbw-replay/1", "task": "par", "arms": arms}}
        line = {"id": "p_0", "arms": {a: {"text": text} for a in arms}}
        (folder / "r.jsonl").write_text(json.dumps(head) + "\n" + json.dumps(line) + "\n")
        return [f"task.files=[{folder / 'par.yaml'}]", f"replay={folder / 'r.jsonl'}",
                f"hydra.run.dir={folder}/o"]
    return make


_SURROGATES = {"/v1/models": Canned(body=b'{"data":[{"id":"m","owned_by":"me \\ud800"}]}'),
               "/openapi.json": Canned(body=b'{"info":{"title":"t\\udc00","version":"1"}}')}

CASES = [
    Case("2 nesting depth", "a server reply nested 3,000 deep", _served(_reply(DEEP)),
         lines=LIVE),
    Case("2 nesting depth", "a server reply of 100,000 nested objects",
         _served(_reply(DEEP_OBJECTS)), lines=LIVE),
    Case("2 nesting depth", "an SSE chunk nested 3,000 deep", _served(_sse(DEEP)),
         lines=LIVE),
    Case("2 nesting depth", "an error body nested 3,000 deep",
         _served(Canned(400, ('{"error":{"message":' + DEEP + "}}").encode())),
         lines=LIVE),
    Case("2 nesting depth", "GET /models nested 100,000 deep: the probe's field is absent",
         _served(gets={"/v1/models": Canned(body=('{"data":' + DEEP_OBJECTS + "}").encode())}),
         rc=0, lines=1),
    Case("2 nesting depth", "a server reply with a 5,001-digit integer",
         _served(_reply(BIG_INT)), lines=LIVE),
    Case("2 nesting depth", "a replay line nested 1,025 deep",
         _replay('"arms": {"unconstrained": {"text": "1", "message": {"x": '
                 + "[" * 1021 + "]" * 1021 + "}}}}")),
    Case("2 nesting depth", "a replay line of 100,000 nested objects",
         _replay('"arms": {"unconstrained": {"text": "1", "message": ' + DEEP_OBJECTS + "}}}")),
    Case("2 nesting depth", "a replay line with a 5,001-digit integer",
         _replay(f'"arms": {{"unconstrained": {{"text": "1", "n_tokens": {BIG_INT}}}}}}}')),
    Case("2 nesting depth", "a dataset row of 100,000 nested objects",
         _dataset('{"q": "x", "a": ' + DEEP_OBJECTS + "}")),
    Case("2 nesting depth", "a dataset row with a 5,001-digit integer",
         _dataset('{"q": "x", "a": ' + BIG_INT + "}")),
    Case("3 lone surrogates", "an item's HTTP 400 message holds one: a clean refusal",
         _served(Canned(400, b'{"error":{"message":"bad \\ud800 schema"}}'), good=2),
         lines=LIVE),
    Case("3 lone surrogates", "GET /models and /openapi.json hold them: the replay re-scores",
         _rescored(gets=_SURROGATES), rc=0, lines=0, seconds=60),
    Case("3 lone surrogates", "a replay header's fields hold them: it re-scores",
         _replay(meta={"model": {"name": "a\ud800"}, "hardware": {"cpu": "\udcff"},
                       "backend": {"name": "s", "base_url": "http://h/\ud800",
                                   "model": "m\udfff", "dialect": "openai",
                                   "server": {"owned_by": "\ud800"}}}),
         rc=0, lines=0),
    Case("3 lone surrogates", "an item's unsupported-schema reason holds one: it re-scores",
         _replay('"arms": {"unconstrained": {"text": "1"}, "constrained[answer]": '
                 '{"text": null, "unsupported_schema": "bad \\ud800 schema"}}}'),
         rc=0, lines=0),
]

CASES += [
    # past MAX_CALLS the item is scored wrong, and the task check warns (one line) that
    # its gold-shaped answer is never right
    Case("13 bfcl parallel", "an item of 3,000 expected calls answered with 3,000",
         _parallel(3000), rc=0, lines=1, seconds=30),
    Case("13 bfcl parallel", "an item of MAX_CALLS expected calls, the worst order",
         _parallel(MAX_CALLS), rc=0, lines=0, seconds=30),
]

# A replay line of 1,000,000 interventions (79 MB) peaked at 957 MB; it is refused now
# before it is decoded, and a line at the cap (4 MB) is read: both peak at ~360 MB here,
# where a re-score of a few small lines peaks at ~195 MB.
CASES += [
    Case("12 memory", "a replay line of 1,000,000 interventions (79 MB)",
         _replay(_interventions(1_000_000)), rss_mb=450, seconds=60),
    Case("12 memory", "a replay line of MAX_INTERVENTIONS interventions (4 MB)",
         _replay(_interventions(MAX_INTERVENTIONS)), rc=0, lines=0, rss_mb=450, seconds=60),
]
