"""The ladder: pattern triage, profiling, IR attribution and compiler-source escalation."""
