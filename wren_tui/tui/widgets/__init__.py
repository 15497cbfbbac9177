"""The viewer's widgets: Line-API panes that render only the rows on screen."""
