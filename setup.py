"""Install the layout's folders as subpackages of the one top-level package `ladder`.

pyproject.toml holds everything else; what its static tables cannot say is "every package and data
folder under these folders, renamed under ladder.", so that list is computed here.
"""
from setuptools import find_namespace_packages, setup

FOLDERS = ("runner", "diagnoser", "indexer", "kernels", "kb")
FOUND = find_namespace_packages(include=[f"{folder}*" for folder in FOLDERS], exclude=["*__pycache__*"])

setup(
    packages=[f"ladder.{name}" for name in FOUND],
    package_dir={f"ladder.{folder}": folder for folder in FOLDERS},
    package_data={"ladder.kb": ["**/*.yaml", "**/*.md", "**/*.json"], "ladder.indexer": ["glossary/*.yaml"],
                  "ladder.diagnoser": ["report/templates/*.j2", "report/templates/*.css"],
                  "ladder.kernels": ["**/*.py", "**/*.json", "README.md"]},
)
