// Call ids as the agent's API expects them: unique, time-based.
export const callId = () => "call_" + Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
