"""The Sessions pane's widgets: a transcript, said vs remembered."""
