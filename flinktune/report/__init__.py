"""Layer 6: every command's reports. ``flinktune.report.emit`` is the one pipeline (which formats a
command has, the JSON envelope, writing to a file); the modules here render (strings, no printing)."""
