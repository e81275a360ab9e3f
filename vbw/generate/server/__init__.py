"""The OpenAI-compatible server backend: the backend kind's provider (kind), the backend
that turns a chat completion into a Generation (client), its HTTP exchange with the server
(connection), and interventions from the server's log-probabilities (logprobs)."""
