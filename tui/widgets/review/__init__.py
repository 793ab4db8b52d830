"""The Review pane's widgets: a proposal's header and its hunks."""
