"""Where the tests find what they read: the repository, the tests folder and its fixtures."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
