"""Server-rendered pages: one blueprint module per feature."""
