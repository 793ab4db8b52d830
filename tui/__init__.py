"""The terminal faces of memdeck: the `memdeck` command and the Textual app."""
