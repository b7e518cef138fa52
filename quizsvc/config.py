"""Code defaults; instance/config.py and QUIZSVC_* environment variables override."""

from __future__ import annotations


class Defaults:
    """Settings every deployment starts from."""

    # None means "a SQLite file in the instance folder" (filled in by configure).
    DATABASE_URL: str | None = None
    # None means "a random key kept in instance/secret_key" (filled in by configure).
    SECRET_KEY: str | None = None
    # Forms and JSON bodies are small; a larger request is refused with 413.
    MAX_CONTENT_LENGTH = 256 * 1024
    # Seconds a client has to send a request's headers (from connecting), and
    # its body (once the headers are in), before `quizsvc serve` drops it.
    REQUEST_READ_TIMEOUT = 20
    # The largest matrix side the lab and the checker accept, so one request
    # cannot ask the server for a huge computation.
    MAX_MATRIX_SIDE = 16
    # SQLite's PRAGMA synchronous in WAL mode: FULL syncs every commit, so an
    # acknowledged answer survives a power cut; NORMAL is faster but may lose
    # the last commits then (never on a mere crash of the server).
    SQLITE_SYNCHRONOUS = "FULL"
    # Bounded waits on the database (seconds; 0 = no limit), so a database
    # that hangs fails a request within seconds (503) instead of holding it:
    # PostgreSQL's connect timeout (whole seconds, at least 2), the wait for a
    # free pooled connection, and each statement's (the server's
    # statement_timeout; the client also gives up on a server silent that
    # long). A migration is not bounded.
    DATABASE_CONNECT_TIMEOUT = 2
    DATABASE_POOL_TIMEOUT = 3
    DATABASE_STATEMENT_TIMEOUT = 3
    # How long a SQLite writer waits for the write lock before its request
    # fails with 503; shorter than a client's patience.
    SQLITE_BUSY_TIMEOUT = 3
    # The Retry-After (seconds) of a 503 for a dependency that is unavailable.
    UNAVAILABLE_RETRY_AFTER = 5

    # Flask-Limiter: None means "a SQLite file in the instance folder" that every
    # worker of this machine shares (filled in by configure; tests given a dict
    # get memory://). Set QUIZSVC_RATELIMIT_STORAGE_URI to a redis:// URL when
    # several servers share the counters.
    RATELIMIT_STORAGE_URI: str | None = None
    RATELIMIT_HEADERS_ENABLED = True
    # When the counters' storage (Redis, or the SQLite file on a full disk)
    # fails, each worker counts in its own memory until the storage answers
    # again (checked after 1, 2, 4 ... 32 s), so signing in keeps working; the
    # log and /readyz say so. False fails closed: sign-in and registration are
    # refused while the storage is down.
    RATELIMIT_IN_MEMORY_FALLBACK_ENABLED = True
    # Seconds the counters' storage may take to connect or answer (Redis
    # socket timeouts, SQLite busy timeout) before the fallback takes over. A
    # hung Redis holds a worker's first sign-in twice this long (the count
    # that failed, then Flask-Limiter asks whether it is back), later ones at
    # most this long when it asks again.
    RATELIMIT_STORAGE_TIMEOUT = 0.5
    # Failed sign-ins (successful ones never count), over the web form and the
    # API together: per client address and account; per account from any
    # address; per address whatever the account.
    LOGIN_RATE_LIMIT = "10 per minute;50 per hour"
    LOGIN_ACCOUNT_RATE_LIMIT = "10 per minute;100 per hour"
    LOGIN_ADDRESS_RATE_LIMIT = "100 per minute;1000 per hour"
    # A class behind one school address registers at once: room for that.
    REGISTER_RATE_LIMIT = "20 per minute;200 per day"
    # Joining a class, per learner, on the page and over the API together:
    # far fewer tries than guessing a join code would ever need.
    JOIN_RATE_LIMIT = "30 per minute"
    # Wrong, used or expired reset codes per client address (page and API):
    # room for typos, nowhere near enough to guess a 12-character code.
    RESET_RATE_LIMIT = "10 per minute;30 per hour"

    # Session cookies: not readable by scripts, not sent on cross-site posts.
    # SESSION_COOKIE_SECURE is switched on per request when served over HTTPS.
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    REMEMBER_COOKIE_HTTPONLY = True
    REMEMBER_COOKIE_SAMESITE = "Lax"
    WTF_CSRF_TIME_LIMIT = None
    # /readyz: how long it waits for all its checks together (seconds), and
    # the free space a SQLite database's disk needs to count as writable.
    READYZ_TIMEOUT = 0.8
    READYZ_MIN_FREE_MB = 100
    # Who may read /metrics: addresses or networks, comma-separated.
    METRICS_ALLOWED = "127.0.0.1,::1"
    # How many reverse proxies in front of the service set X-Forwarded-*; 0 = none.
    TRUSTED_PROXIES = 0


# Offered in the time zone fields' suggestions (a learner's settings, a new
# class); any IANA name is accepted.
COMMON_TIMEZONES = (
    "Asia/Shanghai",
    "Asia/Hong_Kong",
    "Asia/Taipei",
    "Asia/Singapore",
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Europe/London",
    "Europe/Berlin",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Australia/Sydney",
    "UTC",
)
