"""The six panes of the app, one module each."""
