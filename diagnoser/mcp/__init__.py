"""``ladder mcp``: ladder over the Model Context Protocol (stdio), for coding agents that speak it.

The same functions as the command line, as tools (``ladder.diagnoser.mcp.server``): diagnose, IR facts,
the knowledge index, the catalog, bench, and an optimization run's brief, submit and status; the
run's journal, report and brief as resources. A candidate an agent submits goes through ladder's
gate and journal (``ladder.diagnoser.optimize.agent``), never around them.
"""
