"""Request machinery that the pages (quizsvc.web) and the API (quizsvc.api) share.

The signed-in learner (login), the request's id and log line (requestlog),
the strict input checks (input_checks), the one error contract (errors),
security headers (headers), and the drill as a request sees it (drill). It
imports services and the core, never a blueprint of either edge.
"""
