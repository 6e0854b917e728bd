// The two parts of an API key `dss_<public id>_<secret>`. The secret is base64url, so it may hold `_` itself:
// everything after the second `_` is the secret.
export const publicIdOf = (key: string): string => key.split('_')[1] as string;
export const secretOf = (key: string): string => key.split('_').slice(2).join('_');
