"""The knowledge index: compiler source, pass descriptions and the catalog, in a local chromadb."""
