"""Stack loading and validation, the program body, the offline render and the CLI."""
