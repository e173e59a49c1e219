import { Type } from 'typebox';

/** The page the dashboard sends the browser to: the provider's checkout or billing portal. */
export const UrlBody = Type.Object({ url: Type.String({ format: 'uri' }) });
