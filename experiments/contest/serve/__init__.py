"""The contest for a class: `./repro contest serve` (docs/contest-hosting.md).

One module per job: store (the SQLite state both processes share: teams, the queue,
sessions, single-use form nonces, the boards), tokens (hashing), policy (limits, the
close), upload (a bounded, streamed multipart reader), web (aiohttp pages and API, run
unprivileged), scorer (root: runs `contest submit` on each job), snapshot (the boards
the scorer leaves for the web process). The command and the supervisor are in
commands/serve.py.
"""
