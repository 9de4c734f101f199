"""Every test process knows which code each kind of run executes, as `./repro` does: a run's
id hashes that code (core/code_identity.py), and the run kinds say what it is."""
import runkinds.registry  # noqa: F401  (installs the code roots of each kind of run)
