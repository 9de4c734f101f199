"""The application: the CLI, the runner, one run's executor, doctor, cleanup and the report."""
