"""Sharing the memory folder through plain git remotes (issue 26, docs/architecture.md
"Sharing memory"): `shared` is what travels (the memory folder without what only this
machine knows), `repo` the git repository that holds it (`memdeck/sync.git`, one branch per
memory version), `merge` the three-way merge a pull proposes, `push` and `pull` the two
operations. Nothing here writes the memory folder: a pull becomes a proposal, accepted
through the same journaled switch as every change."""
