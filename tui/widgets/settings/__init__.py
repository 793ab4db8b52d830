"""The Settings pane's widgets: a setting's row, the key bindings list, the backups list."""
