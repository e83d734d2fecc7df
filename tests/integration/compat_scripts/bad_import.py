"""A user's everyday mistake: a module that does not exist, imported in setup."""
import nonexistent_module_xyz  # noqa: F401

print("never reached", flush=True)
