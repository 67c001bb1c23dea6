// TidingsPush: Web Push decryption, push registrations and (later) the notification policy (issue 12, seed 002
// sections 4-6). See docs/backends/push.md and Documentation.docc.
