// Which series END. A series ends only when its currency stopped existing: replaced by the euro at a changeover, or
// redenominated into a new code. Any other series that falls silent (RUB, suspended by the ECB since March 2022;
// ISK from 2008 to 2018) has not ended: its later open days are owed and, unanswered, are genuine gaps.

/** One currency that was replaced or abolished: the first day it was no longer the legal tender quoted. */
export interface EndedCurrency {
  /** The first day of the successor (the changeover date). */
  replacedOn: string
  replacedBy: string
  /** Where the changeover is laid down. */
  source: string
}

/**
 * Every currency of the ECB reference-rate history that ended, with its changeover. Euro changeovers: the Council
 * decisions on euro adoption under Article 140(2) TFEU (ex Article 122(2) TEC); redenominations: national law.
 */
export const ENDED_CURRENCIES: Readonly<Record<string, EndedCurrency>> = {
  SIT: {
    replacedOn: '2007-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Slovenia (Council decision of 11 July 2006)',
  },
  CYP: {
    replacedOn: '2008-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Cyprus (Council decision of 10 July 2007)',
  },
  MTL: {
    replacedOn: '2008-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Malta (Council decision of 10 July 2007)',
  },
  SKK: {
    replacedOn: '2009-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Slovakia (Council decision of 8 July 2008)',
  },
  EEK: {
    replacedOn: '2011-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Estonia (Council decision of 13 July 2010)',
  },
  LVL: {
    replacedOn: '2014-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Latvia (Council decision of 9 July 2013)',
  },
  LTL: {
    replacedOn: '2015-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Lithuania (Council decision of 23 July 2014)',
  },
  HRK: {
    replacedOn: '2023-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Croatia (Council decision of 12 July 2022)',
  },
  BGN: {
    replacedOn: '2026-01-01',
    replacedBy: 'EUR',
    source: 'euro changeover of Bulgaria (Council decision of 8 July 2025)',
  },
  TRL: {
    replacedOn: '2005-01-01',
    replacedBy: 'TRY',
    source: 'Turkish lira redenomination, 1,000,000 TRL = 1 TRY (Law No. 5083)',
  },
  ROL: {
    replacedOn: '2005-07-01',
    replacedBy: 'RON',
    source: 'Romanian leu redenomination, 10,000 ROL = 1 RON (Law No. 348/2004)',
  },
}

/** Whether `currency` is one that ended (replaced or abolished), as opposed to merely silent. */
export function isEndedCurrency(currency: string): boolean {
  return Object.hasOwn(ENDED_CURRENCIES, currency)
}
