// What the handlers that reach other instances (send_signal, query_instance) share. A missing, a
// foreign and (for send_signal) a terminal target give the same answer, word for word: no answer
// about a target that is not the caller's may confirm that it exists.
export const TARGET_NOT_FOUND = "target instance not found";
