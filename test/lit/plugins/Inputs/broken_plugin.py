"""A plugin that fails while it is loaded, to test opt's error message."""

raise RuntimeError("this plugin is broken on purpose")
