"""The Memory pane's widgets: the file list, the editor, notes, conflicts, the injected
view, imported memory and a line's trace."""
