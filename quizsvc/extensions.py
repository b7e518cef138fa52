"""Flask extensions, created unbound here and bound in create_app with init_app."""

from __future__ import annotations

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf import CSRFProtect

login_manager = LoginManager()
csrf = CSRFProtect()
# Storage comes from RATELIMIT_STORAGE_URI: memory:// for one server, a Redis
# URL when several servers must share the counters.
limiter = Limiter(key_func=get_remote_address)
