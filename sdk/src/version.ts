/** Version of the SDK API that plugins declare a semver range against (manifest `sdk`). */
export const SDK_VERSION = '1.11.0';
