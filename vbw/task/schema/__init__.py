"""A task's JSON Schemas: the named schema sources (sources), the checks on a schema
(keywords, patterns on RE2, check_schema verdicts cached across runs) and the reading of a
schema that vbw.task.instance builds instances from (walk, numbers)."""
