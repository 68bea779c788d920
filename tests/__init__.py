"""The tests, one package per chapter: helpers are imported by module path (tests.helpers,
tests.ch04.ch04_models), so nothing edits sys.path."""
