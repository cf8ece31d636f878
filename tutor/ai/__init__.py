"""AI features: settings, the model call, hints (no Textual here)."""
