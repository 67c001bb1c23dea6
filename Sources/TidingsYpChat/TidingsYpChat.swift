// TidingsYpChat: the client core of the YpChat Socket.IO chat (issue 13): REST with session cookies,
// Socket.IO events and one ChatState reducer. See docs/ARCHITECTURE.md.
