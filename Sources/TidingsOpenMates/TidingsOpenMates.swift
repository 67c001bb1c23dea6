// TidingsOpenMates: the OpenMates client's phased startup sync, on-demand hydration, sync status, offline
// store and prefetch (issue 14, seed 004). See docs/backends/openmates.md.
