"""ladder's knowledge base: pattern catalog, pass notes and hardware facts (data, not code).

It is a package only so that `importlib.resources.files("ladder.kb")` finds the data in any install.
"""
