"""Judges that score companion replies: rubric judges (heuristic, local or remote LLM) and the
learned teacher."""
