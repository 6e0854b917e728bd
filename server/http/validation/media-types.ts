// The two media types a store or update body may have: a form (the documented encoding) or JSON.
export const FORM = 'application/x-www-form-urlencoded';
export const JSON_TYPE = 'application/json';
