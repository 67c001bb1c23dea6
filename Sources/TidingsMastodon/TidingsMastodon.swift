// TidingsMastodon: the sync engine of a Mastodon / Nextcloud Social client (issue 11): capabilities and
// tiers per account, polling, timelines with gaps, markers and streaming. See docs/ARCHITECTURE.md.
