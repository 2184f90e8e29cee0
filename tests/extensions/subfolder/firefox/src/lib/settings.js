// Loaded on demand, when a message asks for the settings; never at start-up.
export const defaults = Object.freeze({ allowed: ["open", "click"] });
