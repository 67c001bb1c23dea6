// SQLite 3 (Debian: libsqlite3-dev; Homebrew: sqlite; Apple SDKs ship it).
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro that Swift cannot import.
static inline void (*_Nonnull csqlite_transient(void))(void *) { return (void (*)(void *))-1; }
