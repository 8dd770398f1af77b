import type { ConfigObjectType } from '@certwright/sdk';
import { description, localizedTexts, objectName } from './common.js';

/** Terms of service (/api/v1/system/terms-of-services/): localized markdown a profile may require enrollers to accept. */
export const termsOfServiceType: ConfigObjectType = {
  type: 'terms-of-service',
  title: 'Terms of service',
  noun: 'terms of service',
    exportKey: 'termsOfServices',
  description: 'Localized terms (markdown) that a certificate profile can require enrollers to accept.',
  basePath: '/api/v1/system/terms-of-services/',
  tag: 'system',
  section: 'system',
  errorFamily: 'TOS',
  properties: { name: objectName, description, contents: localizedTexts },
  required: ['name', 'contents'],
  hooks: {
    validate(object) {
      const langs = (object.contents as { lang: string }[]).map((c) => c.lang);
      const twice = langs.find((l, i) => langs.indexOf(l) !== i);
      if (twice) return `contents: the language "${twice}" appears twice`;
    },
  },
};
