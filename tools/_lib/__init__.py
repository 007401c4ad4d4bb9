"""The tools' private library, one concern per module; the commands in ``tools/`` are thin
layers over it (argument parsing, orchestration, exit status) and never import each other.
Like the commands, it imports only the standard library at import time: asv, torch and the
suites are imported inside the functions that need them, so the jobs that hold a write
token (the results push, the filing of issues) run it with a bare interpreter.
"""
