"""quizsvc as an LTI 1.3 tool: launches from an LMS, its roster, grades sent back.

Kept light on purpose (quizsvc.models imports the tables from here): the
blueprint, the CLI and the services import what they need themselves.

- models: platforms, deployments, accounts and courses bound to the LMS, the
  used-nonce store, the roster from NRPS, the grade pushes and their log.
- keys: the tool's RSA keys in the instance folder and its JWKS.
- platforms: the registry of platforms and the pylti1p3 tool configuration.
- launch: validating a launch with pylti1p3 and refusing bad ones.
- accounts: the one module that talks to quizsvc's accounts, sessions and
  classes.
- roster (NRPS) and grades (AGS), scores (the one call into the score rules).
- frame: cookies and frame-ancestors for pages shown inside the LMS.
- views: the `lti` blueprint.
"""
