"""Fixture for ladder's tests: shared front-end code that every backend's masked loads pass
through (a distractor: it mentions masks, `other` and fills but explains no backend's choice).
Written for the tests, not taken from the compiler."""


def visit_load(self, node):
    """A masked load with an `other` value: the mask and the fill value are handed to the backend,
    which decides how to fill the masked lanes and copy the rest."""
    mask, other = self.visit(node.mask), self.visit(node.other)
    return self.builder.create_masked_load(self.visit(node.pointer), mask, other)
