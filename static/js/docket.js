// Docket's small shared script. Page-specific behaviour lives in its own file.
