"""Session front-ends: `Session`, fetch/feed handling, timelines."""
