"""One module per kind of named option (see `trinogen.settings.named`)."""
