"""JSON in untrusted text: the grammar Python's json accepts as non-backtracking regexes
(grammar), the first JSON object in a text in linear time (scan), and values decoded and
written as vbw does (values). Not named `json`, so it never shadows the standard library."""
