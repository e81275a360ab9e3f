"""Model-free conformance of the engines to JSON Schema (mode=conformance, and mode=check's
line per engine that rejects a gold-shaped answer): `walk` walks one schema's instances,
`run` every schema in time- and memory-limited children, `engines` opens the tokenizer
and runs each engine, `gold` is mode=check's warning.

How it works and why: docs/design.md, section vbw.generate.conformance.
"""
