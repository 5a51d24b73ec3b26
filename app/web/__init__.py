"""The web shell: the app factory, the layout, error pages and security headers."""
