"""Runtime settings, the project and its stack files, and the clients built from them."""
